//! Operands a call frees while the expression still holds them.
//!
//! An expression evaluates its operands left to right and keeps each result
//! until it combines them: an index's base header is read before the index,
//! a call's arguments are all evaluated before it runs, an assignment's
//! value before its place. A call that can resize a reusable slice frees the
//! slice's old span when it moves it, so an operand evaluated *before* that
//! call (or given to the same call) that holds the slice's header, a view of
//! its span, or the address of a place inside it would be used after the
//! span was freed, though the source keeps no copy of anything:
//!
//! ```text
//! r[grow(ref r)] = 1;          // r's header was read before `grow` moved r
//! show(r, grow(ref r));        // show gets the header of the freed span
//! store(ref r[1], ref r);      // the callee resizes r, then writes through r[1]
//! keep[grow(ref r)] = r;       // the value is read before the place
//! ```
//!
//! Such an expression is an error; evaluating the call first, in a `let`,
//! gives the same program without the stale operand. What can resize what:
//!
//! * a function that can free (its body, or a function it calls, has a
//!   `reusable::resize`, `append` or `free`, or calls an `extern fn` that
//!   frees, as the library pools do: [`may_free`]) given `ref p` can free
//!   anything reachable from `p`; given a value holding or viewing pool
//!   memory (a reusable slice, a slice, a struct or array holding them), it
//!   can free what that points to;
//! * `reusable::resize`, `append` and `free` of `s` free `s`'s own span.
//!
//! Places are compared by path, every index taken as possibly equal to every
//! other; a value computed by a call may view anything its arguments
//! mention; memory reached through a header (`let v = arr[..]`: `v[0]` is
//! `arr[0]`; `let w2 = w`: `w2[0]` is `w[0]`) may be what a call frees under
//! another name when the element types agree ([`Held::mem`],
//! [`Resize::frees`]; for an address always, for a header or view handed
//! over by value when other names are likely: [`Held::spoiled_by_alias`]);
//! a library pool's handle ([`POOL_HANDLES`]) frees
//! any memory a pool handed out. Two arguments of one call that can free
//! through one of them may not overlap (the callee may hold the one while
//! it resizes through the other), save a pool's handle beside a slice of
//! it, which is how a slice is handed over to be reallocated; beside the
//! handle no other argument may be an address inside pool memory, nor two
//! of them view the same memory (the stdlib pools' own operations
//! excepted: [`Pass::report_beside_handle`]). A direct
//! call of an `extern fn` is outside the rule, as `unsafe::` is
//! (docs/language.md 15). Stale copies kept in variables are the
//! programmer's (docs/language.md 15.1). The pass is pure: it reads a
//! checked body and returns diagnostics.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use crate::diagnostics::{Diagnostic, ErrorKind, LabelKind};
use crate::source::Span;
use crate::tir::visit::{self, Part};
use crate::tir::{Arg, Block, Builtin, Expr, ExprKind, ExternId, FuncId, Local, Param, Stmt, Type};

/// The stdlib's library pools' handles: what they hand out is typed by the
/// program (`alloc_slice::<T>`), not by the handle, so a call given one may
/// free memory of any type. (A pool a program writes itself needs
/// `unsafe::slice`, outside the rule.)
pub(crate) const POOL_HANDLES: [&str; 3] =
    ["slice_pool::Pool", "slice_pool_pure::Pool", "arena::Arena"];

/// The handles among [`POOL_HANDLES`] with a public slice field the program
/// may point anywhere (`Pool.nodes`, readable and writable by design): a
/// value computed from one may view memory of any pool, under any name.
pub(crate) const OPEN_HANDLES: [&str; 2] = ["slice_pool::Pool", "slice_pool_pure::Pool"];

/// The stdlib modules of the library pools: their operations take a slice
/// together with its pool's handle by design (`append(ref p, s, v)`), and
/// `slice_pool_pure`'s free spans in Tern code, with no call that shows it.
pub(crate) const POOL_MODULES: [&str; 4] =
    ["slice_pool::", "slice_pool_pure::", "vec_pool::", "arena::"];

/// The functions of `slice_pool_pure` (whose tree is Tern code) that give
/// memory back: its coverage map's release of a span and of a slot's
/// record, a reset, and the release of the whole pool; its `free_slice`,
/// `realloc_slice`, `tree_free`, ... reach them ([`may_free`] follows the
/// calls). A write of a node word alone frees nothing: the coverage map
/// still claims the span.
pub(crate) const PURE_RELEASES: [&str; 5] = [
    "slice_pool_pure::unclaim",
    "slice_pool_pure::mark_dead",
    "slice_pool_pure::tree_init",
    "slice_pool_pure::reset",
    "slice_pool_pure::release",
];

/// Whether the function named `name` is a library pool's operation.
pub(crate) fn pool_operation(name: &str) -> bool {
    POOL_MODULES.iter().any(|m| name.starts_with(m))
}

/// Per struct (by id): whether a value of it holds a header of pool memory
/// (a reusable slice, or a slice, which may view a reusable slice's span or
/// a library pool's, at any depth of fields and arrays), whether it is a
/// pool's handle, and its field types for the walks over what a type
/// reaches.
pub(crate) struct StructFacts {
    holds_pool: Vec<bool>,
    /// Per struct: whether it is one of [`POOL_HANDLES`].
    handles: Vec<bool>,
    /// Per struct: whether it is one of [`OPEN_HANDLES`] (empty: none).
    open: Vec<bool>,
    /// Every struct's field types (what [`StructFacts::elements`] walks).
    fields: Vec<Vec<Type>>,
}

impl StructFacts {
    /// The facts of every struct: each starts false and turns true when a
    /// field's type has it; a struct that turns true re-evaluates the
    /// structs whose fields name it (a worklist, linear in the fields,
    /// whatever order the structs reach each other in).
    pub(crate) fn new(struct_fields: &[Vec<Type>], handles: Vec<bool>) -> StructFacts {
        let n = struct_fields.len();
        let mut f = StructFacts {
            holds_pool: vec![false; n],
            handles,
            open: Vec::new(),
            fields: struct_fields.to_vec(),
        };
        let mut users: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, fields) in struct_fields.iter().enumerate() {
            for t in fields {
                named_structs(t, &mut |id| {
                    if let Some(u) = users.get_mut(id) {
                        u.push(i);
                    }
                });
            }
        }
        let mut work: Vec<usize> = (0..n).collect();
        while let Some(i) = work.pop() {
            if !f.holds_pool[i] && struct_fields[i].iter().any(|t| f.holds_pool(t)) {
                f.holds_pool[i] = true;
                work.extend(&users[i]);
            }
        }
        f
    }

    /// How many structs the facts cover.
    pub(crate) fn structs(&self) -> usize {
        self.holds_pool.len()
    }

    /// Calls `visit` with every type a value of `ty` holds or reaches
    /// (through fields, arrays, slices and reusable slices; each struct
    /// once), `ty` first; true as soon as `visit` says so.
    fn reach(&self, ty: &Type, visit: &mut impl FnMut(&Type) -> bool) -> bool {
        self.walk(ty, &mut |t| match visit(t) {
            true => Visit::Found,
            false => Visit::Enter,
        })
    }

    /// [`Self::reach`] where `visit` also decides whether to look inside a
    /// type (its elements, or a struct's fields, each struct once).
    fn walk(&self, ty: &Type, visit: &mut impl FnMut(&Type) -> Visit) -> bool {
        let mut seen = vec![false; self.fields.len()];
        let mut stack = vec![ty];
        while let Some(t) = stack.pop() {
            match visit(t) {
                Visit::Found => return true,
                Visit::Skip => continue,
                Visit::Enter => {}
            }
            match t {
                Type::Array(e, _) | Type::Slice(e) | Type::Reusable(e) => stack.push(e),
                Type::Struct(id) => {
                    let i = id.0 as usize;
                    if seen.get(i) == Some(&false) {
                        seen[i] = true;
                        stack.extend(self.fields[i].iter());
                    }
                }
                _ => {}
            }
        }
        false
    }

    /// The element types of the slices and reusable slices a value of `ty`
    /// reaches: the types of the memory it may view. With `reusable_only`,
    /// what a callee given the value (or a `ref` to it) can free or
    /// rewrite: the reusable slices' elements, and those of slices whose
    /// elements hold headers (through a view, a callee can rewrite them).
    fn elements(&self, ty: &Type, reusable_only: bool) -> Vec<Type> {
        let mut out: Vec<Type> = Vec::new();
        self.reach(ty, &mut |t| {
            let keep = match t {
                Type::Reusable(e) => Some(e),
                Type::Slice(e) if !reusable_only || self.holds_pool(e) => Some(e),
                _ => None,
            };
            if let Some(e) = keep.filter(|e| !out.contains(e)) {
                out.push((**e).clone());
            }
            false
        });
        out
    }

    /// The element types of the headers a value of `ty` holds itself
    /// (inline: in its fields and array elements, not behind a header):
    /// the spans a library pool's own operation handed the value can free.
    fn own_elements(&self, ty: &Type) -> Vec<Type> {
        let mut out = Vec::new();
        for t in self.with_inline(vec![ty.clone()]) {
            if let Type::Slice(e) | Type::Reusable(e) = t
                && !out.contains(&*e)
            {
                out.push(*e);
            }
        }
        out
    }

    /// `types` and every type their values hold inline (array elements and
    /// struct fields, at any depth, not behind a header): what freeing
    /// memory of those types frees. An address or view typed `i64` may lie
    /// in a span of `[4]i64` or of a struct with such a field (`let v =
    /// r[0][..]`).
    fn with_inline(&self, types: Vec<Type>) -> Vec<Type> {
        let mut out = types;
        let mut i = 0;
        let mut seen = vec![false; self.fields.len()];
        while i < out.len() {
            let inner: Vec<Type> = match &out[i] {
                Type::Array(e, _) => vec![(**e).clone()],
                Type::Struct(id) => match seen.get_mut(id.0 as usize) {
                    Some(s) if !*s => {
                        *s = true;
                        self.fields[id.0 as usize].clone()
                    }
                    _ => Vec::new(),
                },
                _ => Vec::new(),
            };
            for t in inner {
                if !out.contains(&t) {
                    out.push(t);
                }
            }
            i += 1;
        }
        out
    }

    /// The header types (reusable slices, slices) a value of `ty` holds or
    /// reaches: the headers a callee given a `ref` to it may read views from.
    fn header_types(&self, ty: &Type) -> Vec<Type> {
        let mut out: Vec<Type> = Vec::new();
        self.reach(ty, &mut |t| {
            if matches!(t, Type::Reusable(_) | Type::Slice(_)) && !out.contains(t) {
                out.push(t.clone());
            }
            false
        });
        out
    }

    /// The header types a callee given a `ref` to a value of `ty` can
    /// rewrite in memory other names may reach: those behind a header (in
    /// the spans the value's headers view), and, when the place itself is
    /// `shared` (it lies behind a header), those it holds inline.
    fn rewritable_headers(&self, ty: &Type, shared: bool) -> Vec<Type> {
        let mut out: Vec<Type> = Vec::new();
        for t in self.with_inline(vec![ty.clone()]) {
            if let Type::Reusable(e) | Type::Slice(e) = &t {
                for h in self.header_types(e) {
                    if !out.contains(&h) {
                        out.push(h);
                    }
                }
                if shared && !out.contains(&t) {
                    out.push(t);
                }
            }
        }
        out
    }

    /// The same facts, with the structs that are [`OPEN_HANDLES`].
    pub(crate) fn with_open(mut self, open: Vec<bool>) -> StructFacts {
        self.open = open;
        self
    }

    /// Whether a value of `ty` holds or reaches one of [`OPEN_HANDLES`].
    fn open_handle(&self, ty: &Type) -> bool {
        self.reach(
            ty,
            &mut |t| matches!(t, Type::Struct(id) if self.open.get(id.0 as usize) == Some(&true)),
        )
    }

    /// Whether `ty` is itself one of [`POOL_HANDLES`].
    fn is_handle(&self, ty: &Type) -> bool {
        matches!(ty, Type::Struct(id) if self.handles.get(id.0 as usize) == Some(&true))
    }

    /// Whether a value of `ty` holds or reaches a library pool's handle
    /// ([`POOL_HANDLES`]).
    fn pool_handle(&self, ty: &Type) -> bool {
        self.reach(ty, &mut |t| self.is_handle(t))
    }

    /// The handle types ([`POOL_HANDLES`], by struct id) a value of `ty`
    /// holds or reaches: copies of a handle are the same pool (an `Arena`'s
    /// copies share its chunks), so what one handle's pool handed out, any
    /// handle of its type may free. Empty when the value also reaches a
    /// slice outside those handles, which any pool may have handed out (a
    /// struct holding an `Arena` and a `slice_pool` slice).
    fn handle_types(&self, ty: &Type) -> Vec<u32> {
        if self.slice_outside_handles(ty) || self.open_handle(ty) {
            return Vec::new();
        }
        self.reached_handles(ty)
    }

    /// Every handle type ([`POOL_HANDLES`], by struct id) a value of `ty`
    /// holds or reaches: the pools a call given it can free memory of.
    fn reached_handles(&self, ty: &Type) -> Vec<u32> {
        let mut out = Vec::new();
        self.reach(ty, &mut |t| {
            if let Type::Struct(id) = t
                && self.is_handle(t)
                && !out.contains(&id.0)
            {
                out.push(id.0);
            }
            false
        });
        out
    }

    /// Whether a value of `ty` holds or reaches a slice or reusable slice
    /// other than through a pool's handle.
    fn slice_outside_handles(&self, ty: &Type) -> bool {
        self.walk(ty, &mut |t| match t {
            Type::Slice(_) | Type::Reusable(_) => Visit::Found,
            _ if self.is_handle(t) => Visit::Skip,
            _ => Visit::Enter,
        })
    }

    /// Whether a value of `ty` holds or reaches a plain slice (which may
    /// view a library pool's memory).
    fn holds_slice(&self, ty: &Type) -> bool {
        self.reach(ty, &mut |t| matches!(t, Type::Slice(_)))
    }

    /// Whether a value of `ty` itself holds a header of pool memory (a
    /// slice or a reusable slice, in its fields or array elements).
    pub(crate) fn holds_pool(&self, ty: &Type) -> bool {
        match ty {
            Type::Reusable(_) | Type::Slice(_) => true,
            Type::Array(e, _) => self.holds_pool(e),
            Type::Struct(id) => self.holds_pool.get(id.0 as usize) == Some(&true),
            _ => false,
        }
    }
}

/// What [`StructFacts::walk`] does at a type.
enum Visit {
    /// Stop: the walk found what it looks for.
    Found,
    /// Go on, without looking inside this type.
    Skip,
    /// Go on, looking inside it.
    Enter,
}

/// Calls `f` with the id of every struct `ty` names, at any depth.
fn named_structs(ty: &Type, f: &mut impl FnMut(usize)) {
    match ty {
        Type::Struct(id) => f(id.0 as usize),
        Type::Array(e, _) | Type::Slice(e) | Type::Reusable(e) => named_structs(e, f),
        _ => {}
    }
}

/// What calling a function can free.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Frees {
    Nothing,
    /// Spans of reusable slices of these element types only: its body and
    /// its callees' resize or free nothing else (a function without generic
    /// parameters, whose types the checker knows).
    Spans(Vec<Type>),
    /// Anything: a library pool's memory (an extern, a pool in Tern), or a
    /// generic function's spans (its parameters are opaque where it is
    /// summarised).
    Anything,
}

impl Frees {
    /// Whether it can free anything at all.
    pub(crate) fn any(&self) -> bool {
        !matches!(self, Frees::Nothing)
    }

    /// Whether it can free memory of type `t`: a span of `t`, or of a type
    /// that holds `t` inline (a span of `[2]Node` holds nodes; an address
    /// typed `Node` may lie in one, `let v = arr[0][..]; f(ref v[1])`).
    fn memory_of(&self, t: &Type, facts: &StructFacts) -> bool {
        match self {
            Frees::Nothing => false,
            Frees::Spans(ts) => facts.with_inline(ts.clone()).contains(t),
            Frees::Anything => true,
        }
    }

    /// `self` joined with `other`; whether it grew.
    fn join(&mut self, other: &Frees) -> bool {
        match (&mut *self, other) {
            (_, Frees::Nothing) | (Frees::Anything, _) => false,
            (me, Frees::Anything) | (me @ Frees::Nothing, _) => {
                *me = other.clone();
                true
            }
            (Frees::Spans(mine), Frees::Spans(theirs)) => {
                let before = mine.len();
                for t in theirs {
                    if !mine.contains(t) {
                        mine.push(t.clone());
                    }
                }
                mine.len() > before
            }
        }
    }
}

/// Per function item (by index): what calling it can free ([`Frees`]):
/// anything when `frees_in_tern` says so (a pool written in Tern,
/// `slice_pool_pure`, frees with plain stores: [`PURE_RELEASES`]) or its body
/// calls an extern for which `extern_frees` holds; the spans its
/// `reusable::resize`, `append` and `free` name (anything, if the item is
/// `opaque`: generic, or a library pool's, which carves any type out of its
/// spans); and what the functions it calls can free (`bodies[i]` is item
/// `i`'s, whose calls name items by index).
pub(crate) fn may_free(
    bodies: &[&Block],
    extern_frees: &dyn Fn(ExternId) -> bool,
    frees_in_tern: &dyn Fn(usize) -> bool,
    opaque: &dyn Fn(usize) -> bool,
) -> Vec<Frees> {
    let mut frees: Vec<Frees> = (0..bodies.len())
        .map(|i| match frees_in_tern(i) {
            true => Frees::Anything,
            false => Frees::Nothing,
        })
        .collect();
    let mut callers: Vec<Vec<usize>> = vec![Vec::new(); bodies.len()];
    for (i, b) in bodies.iter().enumerate() {
        let mut own = Frees::Nothing;
        visit::each_expr(b, &mut |e| match &e.kind {
            ExprKind::Call { func, .. } => {
                if let Some(c) = callers.get_mut(func.0 as usize) {
                    c.push(i);
                }
            }
            ExprKind::Builtin(op, xs) if frees_its_first(*op) => {
                let span = match xs.first().map(|x| &x.ty) {
                    Some(Type::Reusable(el)) if !opaque(i) => Frees::Spans(vec![(**el).clone()]),
                    _ => Frees::Anything,
                };
                own.join(&span);
            }
            // An extern may free a library pool's memory (`slice_pool`'s
            // `tern_span_free`; `vec_pool`'s through it).
            ExprKind::CallExtern { func, .. } if extern_frees(*func) => {
                own = Frees::Anything;
            }
            _ => {}
        });
        frees[i].join(&own);
    }
    let mut work: Vec<usize> = (0..bodies.len()).filter(|&i| frees[i].any()).collect();
    while let Some(i) = work.pop() {
        let what = frees[i].clone();
        for &c in &callers[i] {
            if frees[c].join(&what) {
                work.push(c);
            }
        }
    }
    frees
}

/// Whether the extern named `symbol` can free pool memory: one the
/// program declares itself (unknown), or a runtime extern that frees or
/// moves: `slice_pool`'s `tern_span_free`, `_resize`, `_reset`, `_finish`;
/// a pool's memory given back (`tern_mem_release`); and the sanitizer's
/// release and retag of a span, which `slice_pool_pure` (whose tree is Tern
/// code) calls on every path that frees or moves one. The rest (`io`,
/// allocation, messages, statistics) free nothing.
pub(crate) fn extern_frees(symbol: &str) -> bool {
    const FREEING: [&str; 10] = [
        "tern_span_free",
        "tern_span_resize",
        "tern_span_reset",
        "tern_span_finish",
        "tern_mem_release",
        "tern_sanitize_release",
        "tern_sanitize_retag",
        "tern_sanitize_region_reset",
        "tern_sanitize_region_end",
        "tern_sanitize_arena_reset",
    ];
    !symbol.starts_with("tern_") || FREEING.contains(&symbol)
}

/// The builtins that free their first operand's span (when they move it).
fn frees_its_first(op: Builtin) -> bool {
    matches!(
        op,
        Builtin::ReusableResize | Builtin::ReusableAppend | Builtin::ReusableFree
    )
}

/// One step of a place's path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Field(u32),
    /// An element of an array (inline), a slice or a reusable slice.
    Index(Base),
}

impl Step {
    /// Whether the two steps can lead to the same place: the same field,
    /// or any two indexes (the kinds differ only where a slice of a
    /// reusable slice stands for it).
    fn meets(&self, other: &Step) -> bool {
        match (self, other) {
            (Step::Field(a), Step::Field(b)) => a == b,
            (Step::Index(_), Step::Index(_)) => true,
            _ => false,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Base {
    Array,
    Slice,
    Reusable,
}

/// A place's path from its root local, shared with the places it lies in:
/// each step keeps the path before it, so the place one step further costs
/// one node (a chain of 100,000 field and index accesses has as many
/// places, one in the other: copied paths took memory and time quadratic
/// in the chain). What is asked of every path is kept with its last step.
#[derive(Clone, Debug, Default)]
struct Steps(Option<Rc<StepNode>>);

#[derive(Debug)]
struct StepNode {
    step: Step,
    before: Steps,
    len: usize,
    /// Some step is an element of a slice or a reusable slice.
    in_pool: bool,
    /// Some step is an element of a slice.
    in_slice: bool,
    /// Every step stays in the root's memory ([`inline`]).
    inline: bool,
}

/// A long path is dropped in a loop, not by recursion through `before`
/// (the last place of a 100,000-link chain would take the others with it).
impl Drop for StepNode {
    fn drop(&mut self) {
        let mut next = self.before.0.take();
        while let Some(node) = next {
            next = match Rc::try_unwrap(node) {
                Ok(mut alone) => alone.before.0.take(),
                Err(_) => None,
            };
        }
    }
}

impl Steps {
    fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |n| n.len)
    }

    /// The path one step further.
    fn then(&self, step: Step) -> Steps {
        let before = self.clone();
        Steps(Some(Rc::new(StepNode {
            step,
            len: before.len() + 1,
            in_pool: before.in_pool() || matches!(step, Step::Index(Base::Reusable | Base::Slice)),
            in_slice: before.in_slice() || step == Step::Index(Base::Slice),
            inline: before.inline() && inline(&step),
            before,
        })))
    }

    fn in_pool(&self) -> bool {
        self.0.as_ref().is_some_and(|n| n.in_pool)
    }

    fn in_slice(&self) -> bool {
        self.0.as_ref().is_some_and(|n| n.in_slice)
    }

    fn inline(&self) -> bool {
        self.0.as_ref().is_none_or(|n| n.inline)
    }

    /// The last `n` steps, the path's last first.
    fn last(&self, n: usize) -> (Vec<Step>, &Steps) {
        let mut out = Vec::with_capacity(n);
        let mut at = self;
        while out.len() < n {
            let node = at.0.as_ref().expect("n <= len");
            out.push(node.step);
            at = &node.before;
        }
        (out, at)
    }
}

/// A place: a local and a path.
#[derive(Clone, Debug)]
struct Place {
    root: u32,
    steps: Steps,
    /// Whether the path passes through a header (an element of a slice or
    /// a reusable slice), ends at a slice, or starts at a local a slice may
    /// name ([`check`]): the memory there may also be another place's,
    /// under another name (`let v = arr[..]`: `v[0]` is `arr[0]`; `let w2 =
    /// w`: `w2[0]` is `w[0]`).
    shared: bool,
    /// The element type of the span the place lies in (the last element of
    /// a slice or reusable slice on its path), if any.
    elem: Option<Type>,
}

/// What a pass has worked out about the expressions it asked about, by
/// address (the body outlives the pass, and no expression is made during
/// it): each worked out once, so that asking at every link of a long chain
/// costs linear time.
type Memo<T> = RefCell<HashMap<*const Expr, T>>;

/// `e`'s entry in `memo`, worked out by `work` the first time.
fn memoized<T: Clone>(memo: &Memo<T>, e: &Expr, work: impl FnOnce() -> T) -> T {
    let key = e as *const Expr;
    if let Some(v) = memo.borrow().get(&key) {
        return v.clone();
    }
    let v = work();
    memo.borrow_mut().insert(key, v.clone());
    v
}

/// The places of the expressions asked about: every place is worked out
/// from the place of the expression it lies in.
type PlaceMemo = Memo<Option<Place>>;

impl Place {
    fn of(e: &Expr, memo: &PlaceMemo) -> Option<Place> {
        memoized(memo, e, || Place::work_out(e, memo))
    }

    fn work_out(e: &Expr, memo: &PlaceMemo) -> Option<Place> {
        let mut p = match &e.kind {
            ExprKind::Local(id) => Place {
                root: id.0,
                steps: Steps::default(),
                shared: false,
                elem: None,
            },
            ExprKind::Field(b, i) => Place::of(b, memo)?.then(Step::Field(*i)),
            // An element of a subslice is an element of what it slices.
            ExprKind::Index(b, _) => {
                let b = match &b.kind {
                    ExprKind::SliceRange { base: sb, .. } => sb,
                    _ => b,
                };
                let k = base(&b.ty)?;
                let mut p = Place::of(b, memo)?.then(Step::Index(k));
                if k != Base::Array {
                    p.elem = Some(e.ty.clone());
                }
                p
            }
            _ => return None,
        };
        p.shared |= matches!(e.ty, Type::Slice(_));
        Some(p)
    }

    /// Whether the place lies in pool memory: its path passes through an
    /// element of a slice or reusable slice.
    fn in_pool(&self) -> bool {
        self.steps.in_pool()
    }

    fn then(mut self, s: Step) -> Place {
        self.shared |= matches!(s, Step::Index(Base::Slice | Base::Reusable));
        self.steps = self.steps.then(s);
        self
    }

    /// The steps that lead from `self` to `other` when `self` is a prefix of
    /// it.
    fn to(&self, other: &Place) -> Option<Vec<Step>> {
        let n = self.steps.len();
        let m = other.steps.len();
        if self.root != other.root || m < n {
            return None;
        }
        let (mut rest, prefix) = other.steps.last(m - n);
        let (ours, _) = self.steps.last(n);
        let (theirs, _) = prefix.last(n);
        if !ours.iter().zip(&theirs).all(|(a, b)| a.meets(b)) {
            return None;
        }
        rest.reverse();
        Some(rest)
    }
}

/// The root of a place no local of the frame names: memory a computed value
/// points into ([`unnamed_pool_place`]).
const UNNAMED: u32 = u32::MAX;

/// The span an element of a computed slice or reusable slice lies in, when
/// `x` is (or lies in) one, reached from it through fields and array
/// elements (`make()[1]`, `(S { ns: mk() }).ns[1].v`): a place under the
/// [`UNNAMED`] root, in pool memory of the slice's element type; `None` when
/// no slice is on the way.
fn unnamed_pool_place(x: &Expr) -> Option<Place> {
    let mut e = x;
    loop {
        match &e.kind {
            ExprKind::Field(b, _) => e = b,
            ExprKind::Index(b, _) => match &b.ty {
                Type::Slice(t) | Type::Reusable(t) => {
                    return Some(Place {
                        root: UNNAMED,
                        steps: Steps::default().then(Step::Index(base(&b.ty)?)),
                        shared: true,
                        elem: Some((**t).clone()),
                    });
                }
                _ => e = b,
            },
            _ => return None,
        }
    }
}

fn base(ty: &Type) -> Option<Base> {
    match ty {
        Type::Array(..) => Some(Base::Array),
        Type::Slice(_) => Some(Base::Slice),
        Type::Reusable(_) => Some(Base::Reusable),
        _ => None,
    }
}

/// What an evaluated operand keeps from memory until its expression is done.
#[derive(Clone, Debug)]
struct Held {
    kind: Kind,
    place: Place,
    /// The types of the memory it keeps: what the headers it holds view, or
    /// the element type of the span an address lies in (what a resize of
    /// another name must be able to free to spoil it).
    mem: Vec<Type>,
    /// It may keep memory a library pool handed out (it holds or views a
    /// plain slice, or lies in one): what a pool's handle can free.
    lib: bool,
    /// A view of what a pool's handle reaches (a call's result made from
    /// it): the handle types it was made from ([`StructFacts::handle_types`];
    /// empty for anything else). A handle of another type does not free it.
    handles: Vec<u32>,
    /// For a `ref` argument: the header types stored in or reached from the
    /// memory at the address ([`StructFacts::header_types`]), whose views
    /// the callee may hold (empty for anything else).
    headers: Vec<Type>,
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    /// A copy of the headers of pool memory (reusable slices, slices)
    /// stored at the place (or a slice of the one there).
    Header,
    /// The address of the place (a `ref` argument, an array indexed or
    /// sliced).
    Address,
    /// A computed value (a call's result) that may view or copy anything in
    /// or reachable from the place.
    View,
}

impl Held {
    fn place(&self) -> &Place {
        &self.place
    }

    /// Whether memory of a type `r` frees is what it keeps, under a name
    /// another place may share.
    /// (A pool's handle beside a slice of it is how a helper is given the
    /// slice to reallocate: its power to free any pool memory is not held
    /// against the other arguments, only the spans it frees by type.)
    fn shares(&self, r: &Resize) -> bool {
        self.place.shared && self.mem.iter().any(|t| r.frees.contains(t))
    }

    /// Whether `r` may free what it keeps under another name. A header or
    /// a view handed over by value is the callee's copy, stale once `r`
    /// frees its memory (section 15.1 of docs/language.md: `--sanitize`
    /// catches its use), so it is held against `r` only when other names
    /// are likely ([`Resize::aliases`]). An address is not a copy the
    /// sanitizer can follow: one behind a header (`ref w2[1]` with
    /// `var w2 = w`, `ref v[1]` with `let v = w[..]`) is held against
    /// every call that frees memory of its element type.
    fn spoiled_by_alias(&self, r: &Resize, facts: &StructFacts) -> bool {
        (matches!(self.kind, Kind::Address) || r.aliases(facts)) && self.shares(r)
    }

    /// Whether a callee given this `ref` and `r` may view a span through a
    /// header here and free that span by rewriting the same header under
    /// the other name: the address lies behind a header (`ref v[0]` with
    /// `let v = rows[..]`), `r` can rewrite headers of a type stored here
    /// in such memory (`ref rows[0]`), and the callee frees spans of that
    /// header's element type. (Inside the callee the two `ref`s are
    /// distinct names: `show(a[..], grow(ref b))` is accepted there.)
    fn rewritten_by(&self, r: &Resize, callee: &Frees, facts: &StructFacts) -> bool {
        matches!(self.kind, Kind::Address)
            && self.place.shared
            && self.headers.iter().any(|t| {
                r.rewrites.contains(t)
                    && matches!(t, Type::Reusable(e) | Type::Slice(e) if callee.memory_of(e, facts))
            })
    }
}

/// Whether one of two places is a prefix of the other (or they are the
/// same).
fn overlap(p: &Place, q: &Place) -> bool {
    p.to(q).is_some() || q.to(p).is_some()
}

/// A call's power to free memory.
#[derive(Clone, Debug)]
struct Resize {
    place: Place,
    /// `true`: a callee given the place (by `ref`, or the memory behind a
    /// slice), which can free any pool memory reachable from it;
    /// `false`: a builtin that frees the span of the reusable slice at the
    /// place itself.
    reach: bool,
    /// The element types of the spans it can free.
    frees: Vec<Type>,
    /// It acts through a pool's handle itself (the argument's type is one of
    /// [`POOL_HANDLES`]), not through memory that merely holds handles: the
    /// power a pool's own operation is exempt from ([`Pass::report_own`]).
    handle: bool,
    /// The argument is a place (`ref p`, `ref c.p`), not a computed one
    /// (`ref pools(ref c)[0]`, whose place is what it mentions).
    plain: bool,
    /// The handle types the argument reaches ([`StructFacts::reached_handles`]):
    /// the pools whose memory, of any type, it can free
    /// ([`Resize::frees_any`]).
    handle_types: Vec<u32>,
    /// What a library pool's own operation can free through the argument:
    /// the spans of the headers it holds itself ([`StructFacts::own_elements`],
    /// with what those hold inline), not what their elements reach.
    own_frees: Vec<Type>,
    /// The header types it can rewrite in memory other names may reach
    /// ([`StructFacts::rewritable_headers`]; empty for a builtin).
    rewrites: Vec<Type>,
    span: Span,
}

impl Resize {
    /// It can free memory of any type: a library pool's, through a handle
    /// its argument reaches.
    fn frees_any(&self) -> bool {
        !self.handle_types.is_empty()
    }

    /// Whether memory it frees may be reached under other names: it acts
    /// through shared memory, frees spans that hold headers (which copies
    /// elsewhere may hold too), or a pool's memory.
    fn aliases(&self, facts: &StructFacts) -> bool {
        self.frees_any() || self.place.shared || self.frees.iter().any(|t| facts.holds_pool(t))
    }

    /// Whether `held` may point into memory this frees, or be a header it
    /// replaces.
    fn spoils(&self, held: &Held) -> bool {
        let p = &self.place;
        let q = &held.place;
        match (held.kind, self.reach) {
            // Headers at or under `p`; and, above `p`, a header that holds
            // `p`'s inline (no slice between).
            (Kind::Header, true) => {
                p.to(q).is_some() || q.to(p).is_some_and(|s| s.iter().all(inline))
            }
            // The header at `p` itself, or a value holding it inline.
            (Kind::Header, false) => q.to(p).is_some_and(|s| s.iter().all(inline)),
            (Kind::View, _) => overlap(p, q),
            // A place inside pool memory reachable from `p` (an element of
            // a reusable slice, or of a slice: a library pool's memory).
            (Kind::Address, true) => p.to(q).is_some_and(|s| {
                s.iter()
                    .any(|s| matches!(s, Step::Index(Base::Reusable | Base::Slice)))
            }),
            // A place inside `p`'s own span.
            (Kind::Address, false) => p.to(q).is_some_and(|s| {
                s.first() == Some(&Step::Index(Base::Reusable)) && s[1..].iter().all(inline)
            }),
        }
    }
}

/// A step that stays in the same memory.
fn inline(s: &Step) -> bool {
    matches!(s, Step::Field(_) | Step::Index(Base::Array))
}

struct Pass<'a> {
    facts: &'a StructFacts,
    /// What a call of the function can free ([`may_free`]).
    frees: &'a dyn Fn(FuncId) -> Frees,
    /// Whether the function is a library pool's operation
    /// ([`pool_operation`]).
    pool_op: &'a dyn Fn(FuncId) -> bool,
    /// The locals whose places are memory other names may reach from the
    /// start (see [`check`]), sorted, each once: looked up for every place.
    shared_roots: Vec<u32>,
    /// What the calls evaluated so far in the statement can free, in
    /// evaluation order: an operand's are a range of it (kept in one list,
    /// not copied up the tree, so a long chain costs linear time).
    resizes: Vec<Resize>,
    diags: Vec<Diagnostic>,
    /// The places worked out so far ([`Place::of`]).
    places: PlaceMemo,
    /// What the expressions asked about keep ([`Pass::held`]; each link of
    /// a chain of subslices keeps its base's).
    helds: Memo<Vec<Held>>,
}

/// The stale-operand diagnostics of one function body (with its parameters
/// and locals); `frees` says which callees can free.
pub(crate) fn check(
    (body, params, locals): (&Block, &[Param], &[Local]),
    facts: &StructFacts,
    frees: &dyn Fn(FuncId) -> Frees,
    pool_op: &dyn Fn(FuncId) -> bool,
) -> Vec<Diagnostic> {
    // A `ref` parameter that, or an array element inside which, can lie in
    // a span it reaches itself (`n: Node` with `kids: reusable[]Node`, given
    // `ref nodes[1]` after `nodes[1].kids = nodes`; `ns: [2]SNode` whose
    // `kids` view the array) may be memory reached through its own headers:
    // `n.vals` may be `n.kids[1].vals`. (A struct field is no element of
    // any span: only the value itself, or an array's element, can be.)
    let mut shared_roots: Vec<u32> = params
        .iter()
        .filter(|p| p.by_ref)
        .filter(|p| {
            let ty = &locals[p.local.0 as usize].ty;
            let reached = facts.with_inline(facts.elements(ty, false));
            let mut elements = vec![ty.clone()];
            for t in facts.with_inline(vec![ty.clone()]) {
                if let Type::Array(e, _) = t {
                    elements.push(*e);
                }
            }
            elements
                .iter()
                .any(|t| facts.holds_pool(t) && reached.contains(t))
        })
        .map(|p| p.local.0)
        .collect();
    // And a local holding an array of headers that a slice may name again:
    // one the body slices (`let va = arr[..]`: `va[0]` is `arr[0]`, and
    // `ref arr` hands a callee both), or hands whole to a callee by `ref`,
    // which may return such a slice. Arrays never sliced stay their own
    // (`drain(ref front[0], ref back[0])`).
    let places = PlaceMemo::default();
    let holds_header_array = |ty: &Type| {
        facts
            .with_inline(vec![ty.clone()])
            .iter()
            .any(|t| matches!(t, Type::Array(e, _) if facts.holds_pool(e)))
    };
    visit::each_expr(body, &mut |e| {
        let named = match &e.kind {
            ExprKind::SliceRange { base, .. } if holds_header_array(&base.ty) => {
                Place::of(base, &places)
            }
            _ => None,
        };
        shared_roots.extend(named.map(|p| p.root));
        if let ExprKind::Call { args, .. } = &e.kind {
            for a in args {
                if let Arg::Ref(x) = a
                    && holds_header_array(&x.ty)
                    && let Some(p) = Place::of(x, &places)
                {
                    shared_roots.push(p.root);
                }
            }
        }
    });
    // One entry per root: a body slicing one array a thousand times would
    // otherwise make every place's lookup as long.
    shared_roots.sort_unstable();
    shared_roots.dedup();
    let mut pass = Pass {
        facts,
        frees,
        pool_op,
        shared_roots,
        resizes: Vec::new(),
        diags: Vec::new(),
        places,
        helds: RefCell::default(),
    };
    pass.block(body);
    pass.diags
}

/// What the operands of one expression evaluated so far keep, by the root
/// local of the place (a call can spoil by path only what shares its root).
#[derive(Default)]
struct Operands {
    before: HashMap<u32, Vec<(Held, Span)>>,
    /// Per memory type, the first operand that keeps memory of it under a
    /// name another place may share ([`Held::shares`]): what a resize that
    /// frees memory of that type may spoil, whatever its root.
    shared: HashMap<Type, Span>,
    /// The same for the addresses among them ([`Held::shares`] of a
    /// [`Kind::Address`]): what a resize that frees memory of that type may
    /// spoil even when nothing else names its memory.
    addresses: HashMap<Type, Span>,
    /// The operands that may keep a library pool's memory ([`Held::lib`]),
    /// shared or not: what a pool's handle can free, whatever its type.
    lib: Vec<(Place, Vec<u32>, Span)>,
}

impl Pass<'_> {
    /// Whether `root` is one of [`Pass::shared_roots`].
    fn shared_root(&self, root: u32) -> bool {
        self.shared_roots.binary_search(&root).is_ok()
    }

    /// [`Place::of`], shared when its root is one of [`Pass::shared_roots`].
    fn place_of(&self, e: &Expr) -> Option<Place> {
        let mut p = Place::of(e, &self.places)?;
        p.shared |= self.shared_root(p.root);
        Some(p)
    }

    fn block(&mut self, b: &Block) {
        for s in &b.stmts {
            self.resizes.clear();
            match s {
                // The value is evaluated before the place.
                Stmt::Assign { place, value } | Stmt::CompoundAssign { place, value, .. } => {
                    let mut ops = Operands::default();
                    let held = self.held_by_address(value);
                    self.operand(&mut ops, value, held);
                    self.operand(&mut ops, place, Vec::new());
                }
                _ => visit::stmt_parts(s, &mut |p| match p {
                    Part::Expr(e) => {
                        self.resizes.clear();
                        self.expr(e);
                    }
                    Part::Block(inner) => self.block(inner),
                }),
            }
        }
    }

    /// Evaluates operand `x`, which keeps `held`: what the calls in it can
    /// free must spoil none of the operands before it.
    fn operand(&mut self, ops: &mut Operands, x: &Expr, held: Vec<Held>) {
        let start = self.resizes.len();
        self.expr(x);
        self.report(ops, start);
        for h in held {
            if h.place.shared {
                for t in &h.mem {
                    ops.shared.entry(t.clone()).or_insert(x.span);
                    if matches!(h.kind, Kind::Address) {
                        ops.addresses.entry(t.clone()).or_insert(x.span);
                    }
                }
            }
            if h.lib {
                ops.lib.push((h.place.clone(), h.handles.clone(), x.span));
            }
            ops.before
                .entry(h.place().root)
                .or_default()
                .push((h, x.span));
        }
    }

    /// Checks `e` and every expression in it; adds what the calls made while
    /// evaluating it can free to `self.resizes`.
    fn expr(&mut self, e: &Expr) {
        let mut ops = Operands::default();
        match &e.kind {
            ExprKind::Index(b, i) => {
                let held = self.base_held(b);
                self.operand(&mut ops, b, held);
                self.operand(&mut ops, i, Vec::new());
            }
            ExprKind::SliceRange { base: b, lo, hi } => {
                let held = self.base_held(b);
                self.operand(&mut ops, b, held);
                for x in [lo, hi].into_iter().flatten() {
                    self.operand(&mut ops, x, Vec::new());
                }
            }
            ExprKind::Call { func, args } => {
                let frees = (self.frees)(*func);
                // Per argument: what it keeps, its span, what the callee
                // can free through it.
                let mut own: Vec<(Vec<Held>, Span, Vec<Resize>)> = Vec::new();
                // Per argument: whether evaluating it makes a call that can
                // free (`g(ref p)` resetting the pool it was given).
                let mut frees_inside = Vec::new();
                for a in args {
                    let (x, held) = match a {
                        Arg::Ref(x) => (x, self.ref_held(x)),
                        Arg::Value(x) => (x, self.held(x)),
                    };
                    let through = if frees.any() {
                        self.through(a)
                    } else {
                        Vec::new()
                    };
                    let before = self.resizes.len();
                    self.operand(&mut ops, x, held.clone());
                    frees_inside.push(self.resizes.len() > before);
                    own.push((held, x.span, through));
                }
                // Against its own arguments by `report_own` (an argument
                // does not clash with itself); the expressions around see
                // them in `self.resizes`.
                self.report_own(&own, (self.pool_op)(*func), &frees_inside, &frees);
                for (_, _, through) in own {
                    self.resizes.extend(through);
                }
            }
            ExprKind::CallExtern { args, .. } => {
                for a in args {
                    let (Arg::Ref(x) | Arg::Value(x)) = a;
                    self.operand(&mut ops, x, Vec::new());
                }
            }
            ExprKind::Builtin(op, xs) => {
                for x in xs {
                    let held = self.held_by_address(x);
                    self.operand(&mut ops, x, held);
                }
                // What it frees is its first operand's (no other operand
                // can hold that slice's header: the types differ), for the
                // operands of the expressions around it.
                if let (true, Some(s)) = (frees_its_first(*op), xs.first()) {
                    for place in self.places(s) {
                        self.resizes.push(Resize {
                            place,
                            reach: false,
                            frees: self.facts.with_inline(self.facts.elements(&s.ty, true)),
                            handle: false,
                            own_frees: Vec::new(),
                            rewrites: Vec::new(),
                            plain: true,
                            handle_types: Vec::new(),
                            span: s.span,
                        });
                    }
                }
            }
            _ => {
                let mut xs = Vec::new();
                visit::expr_children(e, &mut |x| xs.push(x));
                for x in xs {
                    let held = self.held(x);
                    self.operand(&mut ops, x, held);
                }
            }
        }
    }

    /// What a callee that can free can free through argument `a`: through
    /// a `ref`, anything reachable from the place; through a value, what
    /// the pool memory it holds or views points to.
    fn through(&self, a: &Arg) -> Vec<Resize> {
        let (Arg::Ref(x) | Arg::Value(x)) = a;
        if !self.facts.holds_pool(&x.ty) {
            return Vec::new();
        }
        let frees = self.facts.with_inline(self.facts.elements(&x.ty, true));
        let handle = self.facts.is_handle(&x.ty);
        let own_frees = self.facts.with_inline(self.facts.own_elements(&x.ty));
        let handle_types = self.facts.reached_handles(&x.ty);
        let plain = Place::of(x, &self.places).is_some();
        let resize = |place: Place| Resize {
            rewrites: self.facts.rewritable_headers(&x.ty, place.shared),
            place,
            reach: true,
            frees: frees.clone(),
            handle,
            own_frees: own_frees.clone(),
            plain,
            handle_types: handle_types.clone(),
            span: x.span,
        };
        match a {
            Arg::Ref(_) => {
                let mut places = self.places(x);
                // An element of a computed slice: the callee can free
                // through it too (`f(ref make()[1])`).
                if Place::of(x, &self.places).is_none()
                    && let Some(p) = unnamed_pool_place(x)
                {
                    places.push(p);
                }
                places.into_iter().map(resize).collect()
            }
            Arg::Value(_) => {
                let mut out = Vec::new();
                // What the headers in the value point to: a reusable slice
                // the callee frees, those a struct or array holds. (A plain
                // slice's own memory is its pool's to free: through a
                // `Pool` argument, another place.)
                if !matches!(x.ty, Type::Slice(_)) {
                    out.extend(self.places(x).into_iter().map(resize));
                }
                // A slice's elements live in the memory it views.
                if let Type::Slice(el) | Type::Reusable(el) = &x.ty
                    && self.facts.holds_pool(el)
                {
                    out.extend(self.element_places(x).into_iter().map(resize));
                }
                out
            }
        }
    }

    /// The place of `e`, or, for a computed value, every place it mentions.
    fn places(&self, e: &Expr) -> Vec<Place> {
        match self.place_of(e) {
            Some(p) => vec![p],
            None => self.mentioned(e).into_iter().map(|(p, _)| p).collect(),
        }
    }

    /// The places of the elements of the slice, array or reusable slice `e`.
    fn element_places(&self, e: &Expr) -> Vec<Place> {
        if let ExprKind::SliceRange { base: b, .. } = &e.kind {
            return self.element_places(b);
        }
        match (self.place_of(e), base(&e.ty)) {
            (Some(p), Some(k)) => vec![p.then(Step::Index(k))],
            _ => self
                .mentioned(e)
                .into_iter()
                .map(|(p, _)| p.then(Step::Index(Base::Reusable)))
                .collect(),
        }
    }

    /// The outermost places inside `e` whose values are not scalars: what a
    /// value computed from them may view.
    fn mentioned<'e>(&self, e: &'e Expr) -> Vec<(Place, &'e Type)> {
        let mut out = Vec::new();
        let mut stack = vec![e];
        while let Some(x) = stack.pop() {
            match self.place_of(x) {
                Some(p) if !x.ty.is_scalar() => out.push((p, &x.ty)),
                Some(_) => {}
                None => visit::expr_children(x, &mut |c| stack.push(c)),
            }
        }
        out
    }

    /// What a computed value made from `e`'s places may keep: a view of
    /// each, and of the memory the headers there view. A value that holds
    /// reusable slices but no plain slice holds either fresh spans or the
    /// headers of reusable slices of the same types its arguments reach:
    /// arguments that reach none (a `[]u8` given to `text::copy`) are left
    /// out.
    fn views(&self, e: &Expr) -> Vec<Held> {
        // A callee given `ref` of a place inside a computed value (`view(ref
        // id(w)[0])`) may return an untagged view of it: an address there.
        let mut refs = Vec::new();
        if let ExprKind::Call { args, .. } = &e.kind {
            for a in args {
                if let Arg::Ref(x) = a
                    && Place::of(x, &self.places).is_none()
                {
                    refs.extend(self.computed_address(x));
                }
            }
        }
        let ours = self.facts.elements(&e.ty, true);
        let only_reusable = ours.len() == self.facts.elements(&e.ty, false).len();
        self.mentioned(e)
            .into_iter()
            .filter(|(_, ty)| {
                !only_reusable
                    || self
                        .facts
                        .elements(ty, true)
                        .iter()
                        .any(|t| ours.contains(t))
            })
            .flat_map(|(place, ty)| {
                let mut mem = self.facts.elements(ty, false);
                mem.extend(place.elem.clone());
                // A view the callee made of an array in pool memory it was
                // given by `ref` carries no sanitizer tag: as unguarded as
                // an address there.
                let untagged = (matches!(ty, Type::Array(..) | Type::Struct(_)) && place.in_pool())
                    .then(|| Self::address(place.clone()));
                // A value computed from an open handle may view whatever its
                // public slice field was pointed at, under another name.
                let mut place = place;
                place.shared |= self.facts.open_handle(ty);
                let view = Held {
                    kind: Kind::View,
                    place,
                    mem,
                    lib: true,
                    handles: self.facts.handle_types(ty),
                    headers: Vec::new(),
                };
                std::iter::once(view).chain(untagged)
            })
            .chain(refs)
            .collect()
    }

    /// The header (or headers) held at place `p` of type `ty`.
    fn header(&self, p: Place, ty: &Type) -> Held {
        Held {
            kind: Kind::Header,
            mem: self.facts.elements(ty, false),
            lib: self.facts.holds_slice(ty),
            handles: Vec::new(),
            headers: Vec::new(),
            place: p,
        }
    }

    /// The address of place `p`.
    fn address(p: Place) -> Held {
        Held {
            kind: Kind::Address,
            mem: p.elem.clone().into_iter().collect(),
            lib: p.steps.in_slice(),
            handles: Vec::new(),
            headers: Vec::new(),
            place: p,
        }
    }

    /// What the value of `e` keeps until the statement uses it, where the
    /// code keeps an aggregate by its address rather than a copy (an
    /// assignment's value, a builtin's operands: `d[grow(ref r)] = w[0]`,
    /// `print(r[0], grow(ref r))`): [`Self::held`], and an aggregate read
    /// from pool memory is the address of its place.
    fn held_by_address(&self, e: &Expr) -> Vec<Held> {
        let mut held = self.held(e);
        if matches!(e.ty, Type::Array(..) | Type::Struct(_)) {
            match self.place_of(e) {
                Some(p) if p.in_pool() => held.push(Self::address(p)),
                Some(_) => {}
                // Read out of a computed value (`id(r)[0]`): an address in
                // whatever memory the value's places reach.
                None if matches!(e.kind, ExprKind::Index(..) | ExprKind::Field(..)) => {
                    held.extend(self.computed_address(e));
                }
                None => {}
            }
        }
        held
    }

    /// What a `ref` argument keeps: the place's address (or, for an element
    /// of a computed slice, what that may view).
    fn ref_held(&self, x: &Expr) -> Vec<Held> {
        let mut held = match self.place_of(x) {
            Some(p) => vec![Self::address(p)],
            None => self.computed_address(x),
        };
        let headers = self.facts.header_types(&x.ty);
        for h in &mut held {
            h.headers.clone_from(&headers);
        }
        held
    }

    /// What a `ref` to a place inside a computed value keeps (`ref
    /// id(s)[1]`, `ref [u][0][1]`): an address that may lie in the memory
    /// of any slice or reusable slice the value's places reach, stated as
    /// an element of each (what a resize or a pool's handle freeing that
    /// memory spoils). A value that reaches no pool memory is a
    /// temporary of the frame.
    fn computed_address(&self, x: &Expr) -> Vec<Held> {
        let mut out = Vec::new();
        // An element of a slice the expression computes (`ref make()[1]`,
        // `ref (S { ns: mk() }).ns[1]`) lies in pool memory of that element
        // type whatever places it names, perhaps none: a span no place of
        // the frame names, held against every call that can free memory of
        // its type (a callee given it can, through a copy of the slice the
        // element holds).
        if let Some(p) = unnamed_pool_place(x) {
            out.push(Self::address(p));
        }
        for (place, ty) in self.mentioned(x) {
            // A place that itself lies in pool memory (`r[0]`, an array in
            // a span: `ref id(r[0][..])[1]`), whatever its type reaches.
            if place.in_pool() {
                out.push(Self::address(place.clone()));
            }
            // Memory a library pool's handle hands out, of any type
            // (`ref arena::alloc::<i64>(ref a, 2)[1]`): what a call that
            // frees through any copy of the handle may free.
            if self.facts.pool_handle(ty) {
                let mut at = place.clone().then(Step::Index(Base::Slice));
                at.elem = Some(x.ty.clone());
                out.push(Self::address(at));
            }
            for (base, reaches) in [
                (
                    Base::Reusable,
                    self.facts
                        .reach(ty, &mut |t| matches!(t, Type::Reusable(_))),
                ),
                (Base::Slice, self.facts.holds_slice(ty)),
            ] {
                if reaches {
                    let mut at = place.clone().then(Step::Index(base));
                    at.elem = Some(x.ty.clone());
                    out.push(Self::address(at));
                }
            }
        }
        out
    }

    /// What an index or slicing keeps of its base while the index is
    /// evaluated: the header, or an array's address.
    fn base_held(&self, b: &Expr) -> Vec<Held> {
        match (&b.ty, self.place_of(b)) {
            (Type::Array(..), Some(p)) => vec![Self::address(p)],
            // An array inside a computed value (`id(r)[0]`): its address
            // may lie in any memory the value's places reach.
            (Type::Array(..), None) => self.computed_address(b),
            _ => self.held(b),
        }
    }

    /// What the value of `e` keeps from memory: the headers of pool memory
    /// it holds (by the places they were read from), a subslice's base, and
    /// for a computed value (a call's result, a literal) anything it may
    /// view.
    fn held(&self, e: &Expr) -> Vec<Held> {
        memoized(&self.helds, e, || self.work_out_held(e))
    }

    /// [`Self::held`], the first time `e` is asked about.
    fn work_out_held(&self, e: &Expr) -> Vec<Held> {
        if let ExprKind::SliceRange { base: b, .. } = &e.kind {
            return self.base_held(b);
        }
        if !self.facts.holds_pool(&e.ty) {
            return Vec::new();
        }
        if let Some(p) = self.place_of(e) {
            return vec![self.header(p, &e.ty)];
        }
        match &e.kind {
            // A call's result may view anything its arguments reach (a
            // library pool hands out memory of any type).
            ExprKind::Call { .. } | ExprKind::CallExtern { .. } => self.views(e),
            _ => {
                let mut out = Vec::new();
                visit::expr_children(e, &mut |x| out.extend(self.held(x)));
                out
            }
        }
    }

    /// An error for every resize made since `start` that spoils an operand
    /// in `ops` (one per resize, at the first operand it spoils).
    fn report(&mut self, ops: &Operands, start: usize) {
        let mut errors = Vec::new();
        for r in &self.resizes[start..] {
            let held = ops.before.get(&r.place.root).map_or(&[][..], |v| v);
            let by_path = held.iter().find(|(h, _)| r.spoils(h)).map(|(_, at)| *at);
            // Shared memory freed may be what another name reads.
            let by_alias = match r.aliases(self.facts) {
                // Not what a handle of another type reaches: a copy of the
                // handle (another place) is the same pool.
                // (And an address in a builtin span of a type it frees,
                // which `lib` does not hold.)
                true if r.frees_any() => ops
                    .lib
                    .iter()
                    .find(|(q, handles, _)| {
                        handles.is_empty()
                            || overlap(&r.place, q)
                            || handles.iter().any(|t| r.handle_types.contains(t))
                    })
                    .map(|(_, _, at)| *at)
                    .or_else(|| r.frees.iter().find_map(|t| ops.addresses.get(t).copied())),
                true => r.frees.iter().find_map(|t| ops.shared.get(t).copied()),
                false => r.frees.iter().find_map(|t| ops.addresses.get(t).copied()),
            };
            if let Some(at) = by_path.or(by_alias) {
                errors.push((at, r.span));
            }
        }
        for (at, resize) in errors {
            self.error(at, resize);
        }
    }

    /// An error for every argument of one call that overlaps another
    /// argument the callee can free through (it may hold the one while it
    /// resizes through the other): `(what it keeps, its span, what the
    /// callee can free through it)` per argument.
    /// One error per call, at the first clash.
    /// `pool_op`: a library pool's operation, which takes a slice with its
    /// pool's handle by design (the handle's power to free any memory is
    /// not held against the slice; what the op frees through the slice
    /// itself is, even when its elements hold handles).
    fn report_own(
        &mut self,
        args: &[(Vec<Held>, Span, Vec<Resize>)],
        pool_op: bool,
        frees_inside: &[bool],
        callee: &Frees,
    ) {
        // The stdlib pools' own operations free only the slices they are
        // handed (`vec_pool::push(ref p, ref outer.items[i], x)` grows the
        // inner vector, not `outer`'s storage).
        if !pool_op && self.report_beside_handle(args) {
            return;
        }
        for (j, (_, _, through)) in args.iter().enumerate() {
            // A library pool's operation takes its pool's handle first and
            // the slice or vector it reallocates or frees next; what follows
            // (`append`'s and `push`'s element, a length) it stores or
            // reads, and frees nothing through.
            if pool_op && j > 1 {
                continue;
            }
            for r in through {
                // A library pool's own operation frees only the spans it is
                // handed (the slice it reallocates, a vector's storage): the
                // handle's power to free any of its pool's memory is exempt,
                // and what those spans' elements reach (handles included)
                // it does not free.
                let own_op;
                let own = match pool_op {
                    true => {
                        own_op = Resize {
                            frees: r.own_frees.clone(),
                            handle_types: Vec::new(),
                            ..r.clone()
                        };
                        &own_op
                    }
                    false => r,
                };
                // Nor is a value computed from the handle itself or a part of
                // it (a slice the pool just handed out, `push(ref p, ref v,
                // alloc_slice(ref p, 3))`) held against the handle: what it
                // views through the other arguments is held against them.
                // Not one computed from a place that holds the handle (`ref
                // c` for the handle `c.p`: it may view anything else `c`
                // holds), nor one whose computation can free (a helper given
                // `ref p` may reset the pool under the op's other arguments).
                let exempt = |i: usize, h: &Held| {
                    pool_op
                        && r.handle
                        && r.plain
                        && !frees_inside.get(i).copied().unwrap_or(true)
                        && matches!(h.kind, Kind::View)
                        && r.place.to(h.place()).is_some()
                };
                // Nor with itself, but for an address in pool memory that
                // the callee can free through it: `f(ref nodes[1])`, whose
                // `n.kids` is a copy of `nodes` the program stored there,
                // moves the span its `ref` lies in (the sanitizer follows no
                // `ref`). Only if the callee frees spans of that element
                // type at all (one that only appends to `n.name` cannot).
                let (held, at, _) = &args[j];
                if held.iter().any(|h| {
                    matches!(h.kind, Kind::Address)
                        && h.shares(own)
                        && h.mem.iter().any(|t| callee.memory_of(t, self.facts))
                }) {
                    self.diags
                        .push(Diagnostic::new(ErrorKind::StaleSelfReference, *at));
                    return;
                }
                let clash = args.iter().enumerate().find(|(i, (held, _, _))| {
                    *i != j
                        && held.iter().any(|h| {
                            overlap(&r.place, h.place()) && !exempt(*i, h)
                                || !(pool_op && r.handle)
                                    && (h.spoiled_by_alias(own, self.facts)
                                        || h.rewritten_by(own, callee, self.facts))
                        })
                });
                if let Some((_, (_, at, _))) = clash {
                    self.diags.push(
                        Diagnostic::new(ErrorKind::StaleArgument, *at)
                            .label(r.span, LabelKind::MayResize),
                    );
                    return;
                }
            }
        }
    }

    /// [`Self::report_own`] for a call given a library pool's handle that
    /// can free through it: the handle's power to free any memory of its
    /// pool is held against no slice handed over with it (that is how a
    /// helper reallocates one), but the callee cannot know what the other
    /// arguments share, so none of them may be an address inside a
    /// library pool's memory (`ref s[1]`: the callee could free `s`'s span
    /// and write through it), and no two of them may view the same memory
    /// (`s` with `s[1..]`: free through one, use the other). Whether it
    /// reported.
    fn report_beside_handle(&mut self, args: &[(Vec<Held>, Span, Vec<Resize>)]) -> bool {
        let Some((j, r)) = args.iter().enumerate().find_map(|(j, (_, _, through))| {
            through.iter().find(|r| r.frees_any()).map(|r| (j, r))
        }) else {
            return false;
        };
        let in_memory =
            |h: &Held| h.lib && matches!(h.kind, Kind::Address) && !h.place.steps.inline();
        // What an argument views: a header's or a value's memory; a `ref` to
        // a place holding slices views what they view (`ref arr` of a `[2][]i64`).
        let ref_views = |h: &Held| {
            matches!(h.kind, Kind::Address) && h.headers.iter().any(|t| matches!(t, Type::Slice(_)))
        };
        let viewing = |h: &Held| h.lib && !matches!(h.kind, Kind::Address) || ref_views(h);
        let viewed = |h: &Held| -> Vec<Type> {
            match ref_views(h) {
                true => h
                    .headers
                    .iter()
                    .filter_map(|t| match t {
                        Type::Slice(e) | Type::Reusable(e) => Some((**e).clone()),
                        _ => None,
                    })
                    .collect(),
                false => h.mem.clone(),
            }
        };
        // The same memory: a computed value may view anything its place
        // reaches; two headers, when one holds the other inline (`w` and
        // `w.f`), or when both lie in memory other names reach and view
        // memory of one type (`w[1]` and `rows[1]` with `let w = rows[..]`).
        // (A header stored in a slice's element, `ss[0]`, views other
        // memory than the slice `ss`.)
        let behind = |p: &Place| p.in_pool() || self.shared_root(p.root);
        let one_type = |h: &Held, g: &Held| {
            let theirs = viewed(g);
            viewed(h).iter().any(|t| theirs.contains(t))
        };
        let same = |h: &Held, g: &Held| match (h.kind, g.kind) {
            (Kind::View, Kind::View) => overlap(&h.place, &g.place),
            // A computed value viewing what a slice (or memory behind a
            // header) views, beside a header in such memory, or a `ref` to
            // slices there (`id(w)[1]` and `rows[1]`).
            (Kind::View, _) | (_, Kind::View) => {
                let (v, other) = if matches!(h.kind, Kind::View) {
                    (h, g)
                } else {
                    (g, h)
                };
                overlap(&h.place, &g.place)
                    || (v.place.shared || behind(&v.place))
                        && !matches!(other.kind, Kind::View)
                        && behind(&other.place)
                        && one_type(h, g)
            }
            _ => {
                let inline_under =
                    |a: &Place, b: &Place| a.to(b).is_some_and(|s| s.iter().all(inline));
                inline_under(&h.place, &g.place)
                    || inline_under(&g.place, &h.place)
                    || behind(&h.place) && behind(&g.place) && one_type(h, g)
            }
        };
        let others = || args.iter().enumerate().filter(move |(i, _)| *i != j);
        // The handle itself kept in its pool's memory (`put(ref hs[0])`
        // with the handle a field of `hs[0]`): the callee can free the
        // memory it then writes the handle's neighbours through.
        let handle_inside = args[j].0.iter().any(in_memory).then_some((j, &args[j]));
        // Two copies in one literal argument (`[s, s]`, `W { a: u, b: u }`).
        let within = |held: &Vec<Held>| {
            held.iter().enumerate().any(|(a, h)| {
                held[a + 1..].iter().any(|g| {
                    viewing(h)
                        && viewing(g)
                        && (matches!(h.kind, Kind::Header) || matches!(g.kind, Kind::Header))
                        && same(h, g)
                })
            })
        };
        let clash = handle_inside
            .or_else(|| others().find(|(_, (held, _, _))| held.iter().any(in_memory)))
            .or_else(|| others().find(|(_, (held, _, _))| within(held)))
            .or_else(|| {
                others().find(|(i, (held, _, _))| {
                    others().any(|(k, (earlier, _, _))| {
                        k < *i
                            && held
                                .iter()
                                .filter(|h| viewing(h))
                                .any(|h| earlier.iter().filter(|g| viewing(g)).any(|g| same(h, g)))
                    })
                })
            });
        let Some((_, (_, at, _))) = clash else {
            return false;
        };
        self.diags.push(
            Diagnostic::new(ErrorKind::StaleBesideHandle, *at)
                .label(r.span, LabelKind::MayFreeThroughHandle),
        );
        true
    }

    fn error(&mut self, at: Span, resize: Span) {
        self.diags
            .push(Diagnostic::new(ErrorKind::StaleOperand, at).label(resize, LabelKind::MayResize));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A path as long as the longest chain the front end accepts is built
    /// and dropped on a small stack: each step one node, the drop a loop.
    #[test]
    fn a_long_path_is_built_and_dropped_without_recursion() {
        std::thread::Builder::new()
            .stack_size(64 * 1024)
            .spawn(|| {
                let mut path = Steps::default();
                for i in 0..200_000 {
                    path = path.then(if i % 2 == 0 {
                        Step::Field(i)
                    } else {
                        Step::Index(Base::Slice)
                    });
                }
                assert_eq!(path.len(), 200_000);
                assert!(path.in_pool() && path.in_slice() && !path.inline());
                let (last, _) = path.last(2);
                assert_eq!(last, [Step::Index(Base::Slice), Step::Field(199_998)]);
            })
            .expect("spawns")
            .join()
            .expect("no overflow");
    }
}
