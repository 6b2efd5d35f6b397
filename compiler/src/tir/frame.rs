//! The frame plan: where every local and every temporary of a function
//! lives, decided once, here, for everyone who needs to know.
//!
//! Three parts of the project depend on the answer and must agree on it:
//! the backend (`codegen/src/lower/`), which gives a local a stack slot or
//! SSA variables and lets a `let` adopt its initialiser's temporary (it
//! reads the homes and the addressed locals); the interpreter
//! (`interp/src/code.rs`), whose frames mirror the backend's slots so that
//! aliasing and lifetimes are the backend's, which it checks (it reads the
//! whole layout); and the front end's frame bound (`check::frame`), which
//! rejects a function whose frame could not exist (it reads
//! [`FramePlan::bound`]). Each of them calls [`plan`].
//!
//! The rules:
//! * a `ref` parameter and an aggregate value parameter are *passed*: they
//!   live at the address the caller gives (an aggregate is the caller's
//!   fresh copy, used in place);
//! * an expression that makes a fresh aggregate (a struct or array
//!   literal, bytes, an aggregate call result) gets a *temporary* of its
//!   own, one per expression site, reused every time the site runs; so
//!   does an aggregate place passed by value (the caller's copy);
//! * the first `let` of an aggregate local whose initialiser is a fresh
//!   aggregate *adopts* that temporary instead of copying it;
//! * any other aggregate local, and a local whose address is taken
//!   (`ref x`, `unsafe::addr(x)` of a non-slice), lives in memory (a stack
//!   slot); the other locals live in registers (SSA variables) in compiled
//!   code.
//!
//! Temporaries are keyed by expression *site*, the expression's address in
//! the program planned: a plan is only meaningful for the program it was
//! made from, while that program is borrowed. The walk is iterative, so a
//! body of any nesting depth is planned without recursion.

use std::collections::{HashMap, HashSet};

use super::arg_sharing::{Blockers, PlaceArg, holds_pointers};
use super::visit::{self, Part};
use super::{Arg, Block, Builtin, Expr, ExprKind, Function, LocalId, Program, Stmt, Type};

/// Where a local lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Home {
    /// At this byte offset of the laid-out frame: its own slot (in compiled
    /// code a stack slot for an aggregate or an addressed local, registers
    /// for the others).
    Slot(u64),
    /// In the temporary of its first `let`'s initialiser, at this offset.
    Adopted(u64),
    /// At the address the caller passes.
    Passed,
}

impl Home {
    /// The frame offset of a local that lives in the frame.
    pub fn offset(self) -> Option<u64> {
        match self {
            Home::Slot(o) | Home::Adopted(o) => Some(o),
            Home::Passed => None,
        }
    }
}

/// The plan of one function's frame (see the module docs).
#[derive(Debug, Default)]
pub struct FramePlan {
    /// The home of every local, indexed by `LocalId`.
    pub homes: Vec<Home>,
    /// Locals whose address is taken: they live in memory.
    pub addressed: HashSet<LocalId>,
    /// The temporary of each expression site that needs one: its offset,
    /// keyed by [`site`].
    pub temps: HashMap<usize, u64>,
    /// Bytes of the laid-out frame: every local and temporary at an 8-byte
    /// boundary (the interpreter's frame).
    pub size: u64,
    /// Bytes of the compiled frame's stack slots: temporaries, aggregate
    /// locals and addressed locals, each rounded to 8.
    pub slot_bytes: u64,
    /// Words of locals the compiled frame holds in registers (a slice
    /// takes two).
    pub register_words: u64,
    /// The by-value aggregate places passed to Tern functions, whose
    /// temporaries `slot_bytes` counts: the backend makes the copy only
    /// when the callee cannot share the place
    /// ([`super::arg_sharing::ArgSharing::shares_place_arg`]), which takes
    /// the whole program to decide.
    pub place_args: Vec<PlaceArg>,
    /// The frame bound the front end checks (saturating): temporaries and
    /// aggregate locals that own a slot, at their exact sizes. Scalars,
    /// slices and spills are left to the margin between the bound's limit
    /// and Cranelift's.
    pub bound: u64,
}

/// The key of an expression site: its address in the program.
pub fn site(e: &Expr) -> usize {
    e as *const Expr as usize
}

/// Whether values of `ty` live in memory and are handled by address:
/// fixed arrays and structs.
pub fn is_mem(ty: &Type) -> bool {
    matches!(ty, Type::Array(..) | Type::Struct(_))
}

/// The frame plan of `f`, a function of `program`.
pub fn plan(program: &Program, f: &Function) -> FramePlan {
    let mut b = Planner {
        program,
        plan: FramePlan::default(),
        adopted: HashMap::new(),
        seen_let: HashSet::new(),
    };
    b.walk(&f.body);
    let mut passed = vec![false; f.locals.len()];
    for p in &f.params {
        let ty = &f.locals[p.local.0 as usize].ty;
        if p.by_ref || is_mem(ty) {
            passed[p.local.0 as usize] = true;
        }
    }
    let mut homes = Vec::with_capacity(f.locals.len());
    for (i, local) in f.locals.iter().enumerate() {
        let id = LocalId(i as u32);
        let home = if passed[i] {
            b.plan.register_words += 1;
            Home::Passed
        } else if let Some(&offset) = b.adopted.get(&id) {
            Home::Adopted(offset)
        } else {
            let size = program.layout(&local.ty).size;
            if is_mem(&local.ty) {
                b.plan.bound = b.plan.bound.saturating_add(size);
            }
            if is_mem(&local.ty) || b.plan.addressed.contains(&id) {
                b.plan.slot_bytes = b.plan.slot_bytes.saturating_add(size.next_multiple_of(8));
            } else {
                b.plan.register_words += size.div_ceil(8);
            }
            Home::Slot(b.slot(&local.ty))
        };
        homes.push(home);
    }
    b.plan.homes = homes;
    b.plan
}

/// A node still to visit, in program order.
enum Node<'p> {
    Block(&'p Block),
    Stmt(&'p Stmt),
    Expr(&'p Expr),
}

struct Planner<'p> {
    program: &'p Program,
    plan: FramePlan,
    /// Locals whose first `let` adopts its initialiser's temporary.
    adopted: HashMap<LocalId, u64>,
    /// Locals whose `let` was seen (only the first one can adopt).
    seen_let: HashSet<LocalId>,
}

impl<'p> Planner<'p> {
    /// A fresh 8-byte-aligned slot for a value of type `ty`.
    fn slot(&mut self, ty: &Type) -> u64 {
        let offset = self.plan.size.next_multiple_of(8);
        let size = self.program.layout(ty).size;
        self.plan.size = offset.saturating_add(size);
        offset
    }

    /// The temporary of site `e` (of an aggregate type).
    fn temp(&mut self, e: &'p Expr) -> u64 {
        let key = site(e);
        if let Some(&offset) = self.plan.temps.get(&key) {
            return offset;
        }
        let offset = self.slot(&e.ty);
        let size = self.program.layout(&e.ty).size;
        self.plan.slot_bytes = self
            .plan
            .slot_bytes
            .saturating_add(size.next_multiple_of(8));
        self.plan.bound = self.plan.bound.saturating_add(size);
        self.plan.temps.insert(key, offset);
        offset
    }

    /// Visits the body in program order (a pre-order walk with an explicit
    /// stack, children pushed in reverse), so that the first `let` of a
    /// local is the one the backend translates first.
    fn walk(&mut self, body: &'p Block) {
        let mut todo = vec![Node::Block(body)];
        while let Some(node) = todo.pop() {
            let mut children: Vec<Node<'p>> = Vec::new();
            match node {
                Node::Block(block) => children.extend(block.stmts.iter().map(Node::Stmt)),
                Node::Stmt(stmt) => self.stmt(stmt, &mut children),
                Node::Expr(e) => self.expr(e, &mut children),
            }
            todo.extend(children.into_iter().rev());
        }
    }

    fn stmt(&mut self, stmt: &'p Stmt, children: &mut Vec<Node<'p>>) {
        if let Stmt::Let { local, init } = stmt {
            let first_let = self.seen_let.insert(*local);
            if first_let && is_mem(&init.ty) && init.is_fresh_aggregate() {
                let offset = self.temp(init);
                self.adopted.insert(*local, offset);
            }
        }
        match stmt {
            // The value before the place, as both run them (so temporaries
            // get their offsets in the order they are made).
            Stmt::Assign { place, value } | Stmt::CompoundAssign { place, value, .. } => {
                children.push(Node::Expr(value));
                children.push(Node::Expr(place));
            }
            _ => visit::stmt_parts(stmt, &mut |p| {
                children.push(match p {
                    Part::Expr(e) => Node::Expr(e),
                    Part::Block(b) => Node::Block(b),
                })
            }),
        }
    }

    fn expr(&mut self, e: &'p Expr, children: &mut Vec<Node<'p>>) {
        match &e.kind {
            ExprKind::Call { args, .. } | ExprKind::CallExtern { args, .. } => {
                // An aggregate result: the caller's slot the callee writes.
                if matches!(e.kind, ExprKind::Call { .. }) && is_mem(&e.ty) {
                    self.temp(e);
                }
                let blockers = Blockers::of(args);
                for (index, arg) in args.iter().enumerate() {
                    match arg {
                        // A place passed by value is copied at the call
                        // (in compiled code unless the callee shares it).
                        Arg::Value(x) if is_mem(&x.ty) && !x.is_fresh_aggregate() => {
                            self.temp(x);
                            if let ExprKind::Call { func, .. } = &e.kind {
                                self.plan.place_args.push(PlaceArg {
                                    callee: *func,
                                    index,
                                    may_share: blockers.may_share(index),
                                    holds_pointers: holds_pointers(self.program, &x.ty),
                                    bytes: self.program.layout(&x.ty).size.next_multiple_of(8),
                                });
                            }
                        }
                        Arg::Value(_) => {}
                        Arg::Ref(x) => self.mark_addressed(x),
                    }
                }
            }
            ExprKind::StructLit { .. }
            | ExprKind::ArrayRepeat { .. }
            | ExprKind::ArrayLit(_)
            | ExprKind::Bytes(_) => {
                self.temp(e);
            }
            // An aggregate element read from a place is copied before the
            // resize: the place may lie in the span the resize moves and frees.
            ExprKind::Builtin(Builtin::ReusableAppend, args)
                if args
                    .get(1)
                    .is_some_and(|x| is_mem(&x.ty) && !x.is_fresh_aggregate()) =>
            {
                self.temp(&args[1]);
            }
            ExprKind::Builtin(Builtin::UnsafeAddr, args) => {
                if let Some(x) = args.first()
                    && !matches!(x.ty, Type::Slice(_) | Type::Reusable(_))
                {
                    self.mark_addressed(x);
                }
            }
            _ => {}
        }
        visit::expr_children(e, &mut |x| children.push(Node::Expr(x)));
    }

    /// A place whose address is taken: the local it is, if it is one.
    fn mark_addressed(&mut self, place: &Expr) {
        if let ExprKind::Local(id) = place.kind {
            self.plan.addressed.insert(id);
        }
    }
}
