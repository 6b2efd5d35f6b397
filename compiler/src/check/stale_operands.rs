//! Operands a call frees while the expression still holds them.
//!
//! An expression evaluates its operands left to right and keeps each result
//! until it combines them: an index's base header is read before the index,
//! a call's arguments are all evaluated before it runs. A call that can
//! resize a reusable slice frees the slice's old span when it moves it, so an
//! operand read *before* that call (or given to the same call) that holds the
//! slice's header, or the address of a place inside its span, would be used
//! after the span was freed, though the source keeps no copy of anything:
//!
//! ```text
//! r[grow(ref r)] = 1;          // r's header was read before `grow` moved r
//! show(r, grow(ref r));        // show gets the header of the freed span
//! store(ref r[1], ref r);      // the callee resizes r, then writes through r[1]
//! ```
//!
//! Such an expression is an error; evaluating the call first, in a `let`,
//! gives the same program without the stale operand. What can resize what:
//!
//! * a call given `ref p` (a function or `extern fn`) can resize every
//!   reusable slice reachable from `p`: its header may be replaced, and the
//!   spans of the slices under it freed;
//! * a call given a slice or reusable slice by value whose elements can hold
//!   reusable slices can resize those elements;
//! * `reusable::resize`, `append` and `free` of `s` free `s`'s own span.
//!
//! Places are compared by path (local, fields, indexes), every index taken
//! as possibly equal to every other. A header copied out of an element
//! (`r[0]` of a `reusable[]reusable[]T`) before its container moves is
//! still good, and is allowed; the rule is otherwise conservative. Stale
//! copies kept in variables are the programmer's (docs/language.md 15.1).
//! The pass is pure: it reads a checked body and returns diagnostics.

use crate::diagnostics::{Diagnostic, ErrorKind, LabelKind};
use crate::source::Span;
use crate::tir::visit::{self, Part};
use crate::tir::{Arg, Block, Builtin, Expr, ExprKind, Type};

/// Per struct (by id): whether a value of it holds a reusable slice's header
/// (at any depth of fields and arrays), and whether a `ref`
/// to it can reach a reusable slice (through fields, arrays and the
/// elements of slices).
pub(crate) struct StructFacts {
    holds_reusable: Vec<bool>,
    reaches_reusable: Vec<bool>,
}

impl StructFacts {
    /// The facts of every struct, by a fixpoint over their fields.
    pub(crate) fn new(struct_fields: &[Vec<Type>]) -> StructFacts {
        let n = struct_fields.len();
        let mut f = StructFacts {
            holds_reusable: vec![false; n],
            reaches_reusable: vec![false; n],
        };
        // Facts only turn true, each at most once: at most `2n` rounds.
        loop {
            let mut changed = false;
            for (i, fields) in struct_fields.iter().enumerate() {
                let h = fields.iter().any(|t| f.holds_reusable(t));
                let r = fields.iter().any(|t| f.reaches_reusable(t));
                changed |= h != f.holds_reusable[i] || r != f.reaches_reusable[i];
                f.holds_reusable[i] = h;
                f.reaches_reusable[i] = r;
            }
            if !changed {
                return f;
            }
        }
    }

    /// How many structs the facts cover.
    pub(crate) fn structs(&self) -> usize {
        self.holds_reusable.len()
    }

    fn holds_reusable(&self, ty: &Type) -> bool {
        match ty {
            Type::Reusable(_) => true,
            Type::Array(e, _) => self.holds_reusable(e),
            Type::Struct(id) => self.holds_reusable.get(id.0 as usize) == Some(&true),
            _ => false,
        }
    }

    fn reaches_reusable(&self, ty: &Type) -> bool {
        match ty {
            Type::Reusable(_) => true,
            Type::Slice(e) | Type::Array(e, _) => self.reaches_reusable(e),
            Type::Struct(id) => self.reaches_reusable.get(id.0 as usize) == Some(&true),
            _ => false,
        }
    }
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

/// A place: a local and a path.
#[derive(Clone, Debug)]
struct Place {
    root: u32,
    steps: Vec<Step>,
}

impl Place {
    fn of(e: &Expr) -> Option<Place> {
        match &e.kind {
            ExprKind::Local(id) => Some(Place {
                root: id.0,
                steps: Vec::new(),
            }),
            ExprKind::Field(b, i) => Place::of(b).map(|p| p.then(Step::Field(*i))),
            ExprKind::Index(b, _) => Some(Place::of(b)?.then(Step::Index(base(&b.ty)?))),
            _ => None,
        }
    }

    fn then(mut self, s: Step) -> Place {
        self.steps.push(s);
        self
    }

    /// The steps that lead from `self` to `other` when `self` is a prefix of
    /// it.
    fn to<'a>(&self, other: &'a Place) -> Option<&'a [Step]> {
        let n = self.steps.len();
        (self.root == other.root
            && other.steps.len() >= n
            && self.steps.iter().zip(&other.steps).all(|(a, b)| a.meets(b)))
        .then(|| &other.steps[n..])
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
enum Held {
    /// A copy of the reusable slice headers stored at the place (or a
    /// slice of the one there).
    Header(Place),
    /// The address of the place (a `ref` argument, an array indexed or
    /// sliced).
    Address(Place),
}

impl Held {
    fn place(self) -> Place {
        match self {
            Held::Header(p) | Held::Address(p) => p,
        }
    }
}

/// A call's power to free memory.
#[derive(Clone, Debug)]
struct Resize {
    place: Place,
    /// `true`: a callee given the place (by `ref`, or the memory behind a
    /// slice), which can resize every reusable slice reachable from it;
    /// `false`: a builtin that frees the span of the reusable slice at the
    /// place itself.
    reach: bool,
    span: Span,
}

impl Resize {
    /// Whether `held` may point into memory this frees, or be a header it
    /// replaces.
    fn spoils(&self, held: &Held) -> bool {
        let p = &self.place;
        match (held, self.reach) {
            // Headers at or under `p`; and, above `p`, a header that holds
            // `p`'s inline (no slice between).
            (Held::Header(q), true) => {
                p.to(q).is_some() || q.to(p).is_some_and(|s| s.iter().all(inline))
            }
            (Held::Header(q), false) => p.to(q).is_some_and(|s| s.is_empty()),
            // A place inside a span reachable from `p`.
            (Held::Address(q), true) => p
                .to(q)
                .is_some_and(|s| s.contains(&Step::Index(Base::Reusable))),
            // A place inside `p`'s own span.
            (Held::Address(q), false) => p.to(q).is_some_and(|s| {
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
    diags: Vec<Diagnostic>,
}

/// The stale-operand diagnostics of one function body.
pub(crate) fn check(body: &Block, facts: &StructFacts) -> Vec<Diagnostic> {
    let mut pass = Pass {
        facts,
        diags: Vec::new(),
    };
    pass.block(body);
    pass.diags
}

/// The operands of one expression evaluated so far.
#[derive(Default)]
struct Operands {
    /// What each keeps, with its span.
    before: Vec<(Held, Span)>,
    /// What the calls made while evaluating them can free.
    resizes: Vec<Resize>,
}

impl Pass<'_> {
    fn block(&mut self, b: &Block) {
        for s in &b.stmts {
            visit::stmt_parts(s, &mut |p| match p {
                Part::Expr(e) => {
                    self.expr(e);
                }
                Part::Block(inner) => self.block(inner),
            });
        }
    }

    /// Evaluates operand `x`, which keeps `held`: what the calls in it can
    /// free must spoil none of the operands before it.
    fn operand(&mut self, ops: &mut Operands, x: &Expr, held: Vec<Held>) {
        let inner = self.expr(x);
        self.report(&ops.before, &inner);
        ops.before.extend(held.into_iter().map(|h| (h, x.span)));
        ops.resizes.extend(inner);
    }

    /// Checks `e` and every expression in it; returns what the calls made
    /// while evaluating it can free.
    fn expr(&mut self, e: &Expr) -> Vec<Resize> {
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
            ExprKind::Call { args, .. } | ExprKind::CallExtern { args, .. } => {
                let mut own = Vec::new();
                for a in args {
                    let (x, held) = match a {
                        Arg::Ref(x) => {
                            if self.facts.reaches_reusable(&x.ty) {
                                own.extend(Place::of(x).map(|place| Resize {
                                    place,
                                    reach: true,
                                    span: x.span,
                                }));
                            }
                            (x, Place::of(x).map(Held::Address).into_iter().collect())
                        }
                        Arg::Value(x) => {
                            if let Type::Slice(el) | Type::Reusable(el) = &x.ty
                                && self.facts.reaches_reusable(el)
                            {
                                let step = Step::Index(base(&x.ty).expect("a slice"));
                                let places = match Place::of(x) {
                                    Some(p) => vec![p],
                                    None => self.held(x).into_iter().map(Held::place).collect(),
                                };
                                for p in places {
                                    own.push(Resize {
                                        place: p.then(step),
                                        reach: true,
                                        span: x.span,
                                    });
                                }
                            }
                            (x, self.held(x))
                        }
                    };
                    self.operand(&mut ops, x, held);
                }
                self.report(&ops.before, &own);
                ops.resizes.extend(own);
            }
            ExprKind::Builtin(op, xs) => {
                for x in xs {
                    let held = self.held(x);
                    self.operand(&mut ops, x, held);
                }
                let frees = matches!(
                    op,
                    Builtin::ReusableResize | Builtin::ReusableAppend | Builtin::ReusableFree
                );
                // What it frees is its first operand's (no other operand
                // can hold that slice's header: the types differ), for the
                // operands of the expressions around it.
                if let (true, Some(s)) = (frees, xs.first()) {
                    ops.resizes.extend(Place::of(s).map(|place| Resize {
                        place,
                        reach: false,
                        span: s.span,
                    }));
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
        ops.resizes
    }

    /// What an index or slicing keeps of its base while the index is
    /// evaluated: the header, or an array's address.
    fn base_held(&self, b: &Expr) -> Vec<Held> {
        match (&b.ty, Place::of(b)) {
            (Type::Array(..), Some(p)) => vec![Held::Address(p)],
            (Type::Array(..), None) => Vec::new(),
            _ => self.held(b),
        }
    }

    /// The reusable slices' headers (or addresses of arrays) the value of
    /// `e` holds, by the places they were read from: a reusable slice, a
    /// slice of one or of an array, what holds them. (A plain slice's own
    /// header views memory it does not own: a view kept while what it views
    /// is resized is a stale copy, the programmer's.)
    fn held(&self, e: &Expr) -> Vec<Held> {
        if let ExprKind::SliceRange { base: b, .. } = &e.kind {
            return self.base_held(b);
        }
        if !self.facts.holds_reusable(&e.ty) {
            return Vec::new();
        }
        if let Some(p) = Place::of(e) {
            return vec![Held::Header(p)];
        }
        let mut out = Vec::new();
        match &e.kind {
            ExprKind::Call { args, .. } | ExprKind::CallExtern { args, .. } => {
                // The result may be built from anything the call was given.
                for a in args {
                    match a {
                        Arg::Ref(x) => out.extend(Place::of(x).map(Held::Header)),
                        Arg::Value(x) => out.extend(self.held(x)),
                    }
                }
            }
            _ => visit::expr_children(e, &mut |x| out.extend(self.held(x))),
        }
        out
    }

    /// An error for every operand in `before` that one of `resizes` spoils.
    fn report(&mut self, before: &[(Held, Span)], resizes: &[Resize]) {
        for r in resizes {
            if let Some((_, at)) = before.iter().find(|(h, _)| r.spoils(h)) {
                self.diags.push(
                    Diagnostic::new(ErrorKind::StaleOperand, *at)
                        .label(r.span, LabelKind::MayResize),
                );
            }
        }
    }
}
